module wait4x.dev/v3

go 1.22

require github.com/go-logr/logr v1.4.3
