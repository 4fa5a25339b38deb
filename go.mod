module github.com/p2ptrace/p2ptrace

go 1.26.8

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/google/go-cmp v0.7.0
	go.etcd.io/bbolt v1.5.0
	go.uber.org/goleak v1.3.0
)

require golang.org/x/sys v0.46.0 // indirect
