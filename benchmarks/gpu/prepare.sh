#!/usr/bin/env bash
# Builds, on a machine with Go, the test binaries run.sh runs on the GPU
# machine (which has no Go): cgo-free, for linux/amd64, stripped and
# gzipped (about 4 MB each: what travels to that machine is limited) into
# .device/ (git-ignored; name it in the device tool's carry).
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .device
mkdir -p .device
build() {
  CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -ldflags='-s -w' -o ".device/$1.test" "$2"
  gzip -9 ".device/$1.test"
}
build pjrt ./pjrt
build effects ./effects
build pallas ./pallas
build add ./examples/pallas_add
build matmul ./examples/pallas_matmul
build dsd ./examples/pallas_dsd
build masked ./examples/pallas_masked_matmul
build attention ./examples/pallas_attention
build ssm ./examples/pallas_ssm
build quant ./examples/pallas_quant_matmul
# Which build this is, for run.sh's machine.log.
git describe --always --dirty >.device/VERSION 2>/dev/null || echo unknown >.device/VERSION
ls -l .device
du -sh .device
