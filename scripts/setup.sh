#!/usr/bin/env bash
# Set up everything Lemmata needs on this machine; fast and silent when it is already there.
#
#   scripts/setup.sh [EXTRAS]     EXTRAS: pip extras to install, default "dev" (e.g. "dev,notebooks")
#
# 1. Debian packages from system-packages.txt that are missing (apt-get, when root).
# 2. The virtual environment .venv, with torch==2.13.0 (the CPU build) installed first, so that
#    nothing later can pull a CUDA build.
# 3. Lemmata itself, editable, with the extras; redone only when pyproject.toml or the
#    extras change.
set -euo pipefail
cd "$(dirname "$0")/.."

EXTRAS="${1:-dev}"
PYTHON="${PYTHON:-python3}"
VENV=".venv"
TORCH_VERSION="2.13.0"

say() { printf '\033[1msetup:\033[0m %s\n' "$*" >&2; }

# -- system packages ----------------------------------------------------------------------------
mapfile -t wanted < <(grep -v '^\s*#' system-packages.txt | awk 'NF {print $1}')
missing=()
for pkg in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        say "installing system packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        say "missing system packages: ${missing[*]}; install them with: sudo apt-get install ${missing[*]}"
    fi
fi

# -- virtual environment and torch ---------------------------------------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
    say "creating $VENV"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
fi
PIP=("$VENV/bin/python" -m pip)
have_torch=$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('torch'))" 2>/dev/null || true)
if [[ "$have_torch" != "$TORCH_VERSION"* ]]; then
    say "installing torch==$TORCH_VERSION (CPU build) first"
    "${PIP[@]}" install -q "torch==$TORCH_VERSION"
fi

# -- lemmata --------------------------------------------------------------------------------------
stamp="$VENV/.lemmata-installed"
want="$(sha256sum pyproject.toml | cut -d' ' -f1) [$EXTRAS]"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    say "installing lemmata[$EXTRAS] (editable)"
    "${PIP[@]}" install -q -e ".[$EXTRAS]"
    echo "$want" >"$stamp"
fi
