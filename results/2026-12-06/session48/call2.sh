#!/usr/bin/env bash
# Session 48, device call 2: on an H200 session 47's h200_call1.sh; elsewhere the card's identity, then the single-GPU
# suite on this tree as README's GPU note runs it on an 80 GB card (session 39, call 5): the kernel tests outside the
# LM head on eight workers, the LM head's alone on one, then the nn tests.
#   bash results/2026-12-06/session48/call2.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
SELECT="not 151936" NAME=rest WORKERS=8 TIMEOUT=360 bash results/2026-12-04/session31/call3.sh
SELECT="151936" NAME=lm WORKERS=1 TIMEOUT=110 NN=1 bash results/2026-12-04/session31/call3.sh
