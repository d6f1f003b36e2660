// Package hostile tests the runtime side against peers that send it bytes no
// well-behaved plugin would. The runtime runs in a child process (this test
// binary started again in runtime mode, see runtime_child_test.go), so input
// that crashes it fails a spec with the child's exit status and panic instead
// of killing the test binary.
package hostile
