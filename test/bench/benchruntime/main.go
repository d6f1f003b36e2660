// Command benchruntime is the benchmark runtime on our adaptation, the
// counterpart of test/upstream/benchruntime (see loadgen.Main for usage).
package main

import (
	"github.com/nri-handover/nri/test/bench/loadgen"
	"github.com/nri-handover/nri/test/bench/ournri"
)

func main() { loadgen.Main(ournri.New) }
