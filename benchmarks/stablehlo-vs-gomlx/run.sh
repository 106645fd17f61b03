#!/bin/sh
# Runs the side-by-side benchmarks of halo's stablehlo builder and
# github.com/gomlx/go-xla/pkg/stablehlo, then measures the peak memory of
# each case in its own process (/usr/bin/time -v, "Maximum resident set size").
set -e
cd "$(dirname "$0")"
echo "# $(date -u +%Y-%m-%d) $(lscpu | sed -n 's/^Model name: *//p') $(nproc) cores $(go version)"
# Whole runs are repeated (rather than -count) so that both libraries see
# the same machine conditions in each run.
for i in $(seq "${RUNS:-3}"); do
	go test -run XXX -bench . -benchtime "${BENCHTIME:-2x}" .
done
go test -c -o /tmp/stablehlo-vs-gomlx.test .
for b in Elementwise1M/halo/Build Elementwise1M/halo/BuildPrintGeneric Elementwise1M/halo/BuildPrintPretty Elementwise1M/halo/ParseGeneric Elementwise1M/halo/ParsePretty \
	Elementwise1M/gomlx/Build Elementwise1M/gomlx/BuildPrint \
	MLP10k/halo/Build MLP10k/halo/BuildPrintGeneric MLP10k/halo/BuildPrintPretty MLP10k/halo/ParseGeneric MLP10k/halo/ParsePretty \
	MLP10k/gomlx/Build MLP10k/gomlx/BuildPrint; do
	rss=$(/usr/bin/time -v /tmp/stablehlo-vs-gomlx.test -test.run XXX -test.bench "$(echo "Benchmark$b" | sed 's|^|^|; s|/|$/^|g; s|$|$|')" -test.benchtime 1x 2>&1 >/dev/null |
		sed -n 's/.*Maximum resident set size (kbytes): //p')
	echo "peak-rss $b $((rss / 1024)) MiB"
done
