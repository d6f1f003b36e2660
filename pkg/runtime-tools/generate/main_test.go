package generate_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind (the
// comparison with upstream starts processes and copies their output).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
