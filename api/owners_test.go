package api

import (
	"strings"
	"testing"
)

func TestFieldTableCoversEveryField(t *testing.T) {
	for value, name := range Field_name {
		f := Field(value)
		if f == Field_None {
			continue
		}
		if _, ok := fieldNames[f]; !ok {
			t.Errorf("field %s has no entry in the ownership table", name)
		}
	}
}

func TestExclusiveFieldConflicts(t *testing.T) {
	o := NewOwningPlugins()

	mustClaim(t, o.ClaimMemLimit("ctr0", "a"))
	mustClaim(t, o.ClaimMemLimit("ctr1", "b")) // another container is independent
	mustClaim(t, o.ClaimCPUShares("ctr0", "b"))
	// Two claims under one name are two instances of a plugin: a conflict.
	wantConflict(t, o.ClaimMemLimit("ctr0", "a"), `plugins "a" and "a" both tried to set memory limit`)

	err := o.ClaimMemLimit("ctr0", "b")
	wantConflict(t, err, `plugins "b" and "a" both tried to set memory limit`)

	owner, ok := o.MemLimitOwner("ctr0")
	if !ok || owner != "a" {
		t.Fatalf("memory limit owner = %q, %v; want a", owner, ok)
	}
	if _, ok := o.MemLimitOwner("unknown"); ok {
		t.Fatalf("unknown container reports an owner")
	}
}

func TestPerKeyFieldConflicts(t *testing.T) {
	o := NewOwningPlugins()

	mustClaim(t, o.ClaimEnv("ctr0", "FOO", "a"))
	mustClaim(t, o.ClaimEnv("ctr0", "BAR", "b"))
	mustClaim(t, o.ClaimEnv("ctr1", "FOO", "b"))

	err := o.ClaimEnv("ctr0", "FOO", "b")
	wantConflict(t, err, `plugins "b" and "a" both tried to set environment variable "FOO"`)

	err = o.ClaimMount("ctr0", "/data", "a")
	mustClaim(t, err)
	err = o.ClaimMount("ctr0", "/data", "c")
	wantConflict(t, err, `plugins "c" and "a" both tried to set mount "/data"`)

	if owner, ok := o.EnvOwner("ctr0", "BAR"); !ok || owner != "b" {
		t.Fatalf("BAR owner = %q, %v; want b", owner, ok)
	}
}

func TestClearingTransfersOwnership(t *testing.T) {
	o := NewOwningPlugins()

	mustClaim(t, o.ClaimArgs("ctr0", "a"))
	if err := o.ClaimArgs("ctr0", "b"); err == nil {
		t.Fatalf("second plugin set args without clearing them")
	}

	// b clears first: it now owns the field and may set it.
	o.ClearArgs("ctr0", "b")
	mustClaim(t, o.ClaimArgs("ctr0", "b"))

	// Once cleared by b, a third plugin conflicts with b, the clearer.
	o.ClearArgs("ctr0", "b")
	owner, _ := o.ArgsOwner("ctr0")
	if owner != "-b" {
		t.Fatalf("cleared owner recorded as %q, want -b", owner)
	}
	wantConflict(t, o.ClaimArgs("ctr0", "c"), `plugins "c" and "b" both tried to set arguments`)

	// The same for per-key fields.
	mustClaim(t, o.ClaimAnnotation("ctr0", "k", "a"))
	o.ClearAnnotation("ctr0", "k", "b")
	mustClaim(t, o.ClaimAnnotation("ctr0", "k", "b"))
	wantConflict(t, o.ClaimAnnotation("ctr0", "k", "a"), `plugins "a" and "b" both tried to set annotation "k"`)
}

func TestClearRdtClearsAllRdtFields(t *testing.T) {
	o := NewOwningPlugins()
	mustClaim(t, o.ClaimRdtClosID("c", "a"))
	mustClaim(t, o.ClaimRdtSchemata("c", "a"))
	mustClaim(t, o.ClaimRdtEnableMonitoring("c", "a"))

	o.ClearRdt("c", "b")
	mustClaim(t, o.ClaimRdtClosID("c", "b"))
	mustClaim(t, o.ClaimRdtSchemata("c", "b"))
	mustClaim(t, o.ClaimRdtEnableMonitoring("c", "b"))
	wantConflict(t, o.ClaimRdtSchemata("c", "a"), `plugins "a" and "b" both tried to set RDT schemata`)
}

func TestHooksAccumulate(t *testing.T) {
	o := NewOwningPlugins()
	for _, p := range []string{"p0", "p1", "p2", "p1"} {
		mustClaim(t, o.ClaimHooks("ctr0", p))
	}
	// Two instances of p1 are two claims, as upstream records them.
	owners, ok := o.HooksOwner("ctr0")
	if !ok || owners != "p0,p1,p2,p1" {
		t.Fatalf("hooks owners = %q, %v; want p0,p1,p2,p1", owners, ok)
	}
}

func TestNamespaceOwners(t *testing.T) {
	o := NewOwningPlugins()
	if _, ok := o.NamespaceOwners("ctr0"); ok {
		t.Fatalf("namespace owners reported before any claim")
	}
	mustClaim(t, o.ClaimNamespace("ctr0", "network", "a"))
	mustClaim(t, o.ClaimNamespace("ctr0", "ipc", "b"))
	owners, ok := o.NamespaceOwners("ctr0")
	if !ok || owners["network"] != "a" || owners["ipc"] != "b" || len(owners) != 2 {
		t.Fatalf("namespace owners = %v, %v", owners, ok)
	}
}

func TestConflictHelpers(t *testing.T) {
	f := NewFieldOwners()
	mustClaim(t, f.ClaimSysctl("net.ipv4.ip_forward", "a"))
	wantConflict(t, f.IsCompoundConflict(Field_Sysctl.Key(), "net.ipv4.ip_forward", "a"),
		`plugins "a" and "a" both tried to set sysctl "net.ipv4.ip_forward"`)
	f.ClearSysctl("net.ipv4.ip_forward", "a")
	if err := f.IsCompoundConflict(Field_Sysctl.Key(), "net.ipv4.ip_forward", "a"); err != nil {
		t.Fatalf("the clearer may set its key again: %v", err)
	}
	f.ClearSysctl("net.ipv4.ip_forward", "a")
	wantConflict(t, f.IsCompoundConflict(Field_Sysctl.Key(), "net.ipv4.ip_forward", "b"),
		`plugins "b" and "a" both tried to set sysctl "net.ipv4.ip_forward"`)
	if err := f.IsSimpleConflict(Field_CgroupsPath.Key(), "b"); err != nil {
		t.Fatalf("unclaimed field reported as conflict: %v", err)
	}
}

func TestRecordsDecodedFromTheWireAreWritable(t *testing.T) {
	o := &OwningPlugins{Owners: map[string]*FieldOwners{"ctr0": {}}}
	mustClaim(t, o.ClaimCPUQuota("ctr0", "a"))
	mustClaim(t, o.ClaimRlimit("ctr0", "RLIMIT_NOFILE", "a"))
	o.ClearHugepageLimit("ctr0", "2MB", "a")
	mustClaim(t, (&OwningPlugins{}).ClaimPidsLimit("ctr0", "a"))

	var nilOwners *OwningPlugins
	if _, ok := nilOwners.PidsLimitOwner("ctr0"); ok {
		t.Fatalf("nil record reports an owner")
	}
}

func mustClaim(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected conflict: %v", err)
	}
}

func wantConflict(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no conflict, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("conflict %q, want %q", err, want)
	}
}
