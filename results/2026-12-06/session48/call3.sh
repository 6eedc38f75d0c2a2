#!/usr/bin/env bash
# Session 48, device call 3: on an H200 session 47's h200_call1.sh; elsewhere the card's identity, then the kernel
# GPU tests outside the LM head again on ten workers (call 2's eight reached 836 of them, all passed, in its 360 s).
#   bash results/2026-12-06/session48/call3.sh     (device, repository root; writes $OUT)
. results/2026-12-06/session47/h200_or_card.sh
SELECT="not 151936" NAME=rest WORKERS=10 TIMEOUT=510 bash results/2026-12-04/session31/call3.sh
