// Command etcd is etcd's server, built from this module: etcd's own main
// package cannot be go installed (its go.mod has replace directives).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
