// Command annotator is a minimal NRI plugin that is safe to roll out with
// maxSurge: it stamps every container it sees created with the version and
// instance that handled it. Its logic is package annotator (./annotator),
// which says what it shows; the real-containerd test runs it
// (test/realcontainerd/surge.sh).
//
//	annotator [-socket PATH] [-version V] [-instance ID] [-generation N]
//	          [-ready-file PATH] [-readyz-addr ADDR] [-state-file PATH]
//	          [-stamp-env] [-shutdown-timeout D]
//
// Exit codes: 0 stopped (SIGTERM, also after being superseded), 1 a fault
// (rejected, timed out, bad flags...), 2 the runtime went away (a restart
// reconnects).
package main

import (
	"os"

	"github.com/nri-handover/nri/examples/annotator/annotator"
)

func main() { os.Exit(annotator.Main(os.Args[1:])) }
