module github.com/halo-ml/halo/benchmarks/stablehlo-vs-gomlx

go 1.26

require github.com/gomlx/go-xla v0.1.4

require (
	github.com/halo-ml/halo v0.0.0
	github.com/pkg/errors v0.9.1 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/halo-ml/halo => ../..
