#!/usr/bin/env bash
# Debian/Ubuntu system packages the desktop environment, its tests and the notebook HTML
# check need: Xvfb, xdotool, AT-SPI (pyatspi), LibreOffice Calc, Writer and Impress with the GTK3 plugin,
# a small GTK app, headless Chromium, tesseract OCR (the vision code agent), and python3-venv for `make`'s virtualenv.
# Installs only what is missing; prints why and carries on where it cannot install.
set -u
PKGS="python3-venv xvfb xauth xdotool x11-utils at-spi2-core python3-pyatspi dbus dbus-x11 \
gir1.2-gtk-3.0 python3-gi libatk-adaptor libgail-common libreoffice-calc libreoffice-writer libreoffice-impress \
libreoffice-gtk3 \
chromium thunderbird vlc gimp lxterminal thunar fonts-dejavu-core zenity bubblewrap tesseract-ocr python3-uno"
missing=""
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "sysdeps: not a Debian/Ubuntu system; desktop tests will be skipped with a reason" >&2
  exit 0
fi
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { echo "sysdeps: all system packages present"; exit 0; }
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "sysdeps: missing:$missing; not root and no passwordless sudo, so not installing (desktop tests will skip with a reason)" >&2
    exit 0
  fi
fi
echo "sysdeps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null 2>&1 || echo "sysdeps: apt-get update failed" >&2
$SUDO apt-get install -y -qq --no-install-recommends $missing >/tmp/agentlab-sysdeps.log 2>&1 \
  || { echo "sysdeps: apt-get install failed (see /tmp/agentlab-sysdeps.log); desktop tests will skip with a reason" >&2; exit 0; }
echo "sysdeps: done"
