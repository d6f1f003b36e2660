//go:build tools

// Package tools pins the Kubernetes and etcd commands the real-node e2e
// (test/realkube) builds, so that go.sum covers them and k8s.io never reaches
// the library module's requirements.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
