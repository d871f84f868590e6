# shellcheck shell=bash
# python3 and node for the client examples (examples/), which
# internal/e2e's TestClientExamples runs against a live node; under CI=true
# a missing interpreter fails that test rather than skipping it. Sourced by
# .ci/run, which provides apt_install.
command -v python3 >/dev/null 2>&1 || apt_install python3
command -v node >/dev/null 2>&1 || apt_install nodejs
python3 --version
node --version
