module github.com/halo-ml/halo

go 1.26.0

require (
	github.com/ebitengine/purego v0.11.3
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.49.0
	gonum.org/v1/gonum v0.17.0
	google.golang.org/protobuf v1.36.12
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
