# shellcheck shell=bash
# Chromium for the web table's browser tests (webtable/browser_test.go),
# and Node/npm for `make static` (jQuery and DataTables from npm). Sourced by
# .ci/run, which provides apt_install. Under CI=true the browser tests fail
# rather than skip when Chromium is missing. A Chinese font (WenQuanYi
# Micro Hei), so the zh pages are measured and shot with real glyphs.
apt_install chromium fonts-wqy-microhei
if ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi
export CRONSHEET_CHROMIUM=/usr/bin/chromium
"$CRONSHEET_CHROMIUM" --version
npm --version
