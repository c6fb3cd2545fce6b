#!/bin/sh
# Starts a 64x64 Xvfb for Ebitengine, then runs the server given as
# arguments under agonesrun (Agones lifecycle; SIGTERM passed on).
set -e
Xvfb :99 -screen 0 64x64x24 -nolisten tcp >/dev/null 2>&1 &
export DISPLAY=:99
exec agonesrun --label game=arena -- "$@"
