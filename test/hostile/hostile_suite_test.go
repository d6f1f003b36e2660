package hostile

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// TestMain turns this binary into the runtime process when the parent asks
// for one; otherwise it runs the specs.
func TestMain(m *testing.M) {
	if socket := os.Getenv(runtimeSocketEnv); socket != "" {
		os.Exit(runRuntimeChild(socket))
	}
	os.Exit(m.Run())
}

func TestHostile(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultEventuallyPollingInterval(10 * time.Millisecond)
	RunSpecs(t, "Runtime under hostile peers")
}
