module github.com/halo-ml/halo

go 1.26
