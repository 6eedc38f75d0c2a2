"""Triton kernels. Nothing here imports torch.distributed."""
