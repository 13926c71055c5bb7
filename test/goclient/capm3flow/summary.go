package main

import (
	"fmt"

	"k8s.io/klog/v2"
)

type check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
}

type nic struct {
	Name string `json:"name"`
	MAC  string `json:"mac"`
	IP   string `json:"ip,omitempty"`
}

// machineAddress is a Cluster API MachineAddress (type, address).
type machineAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// host is what the client learnt about the host its claim got.
type host struct {
	// Claim is the HostClaim's name, HardwareData the HardwareData its
	// status names.
	Claim          string           `json:"claim"`
	HardwareData   string           `json:"hardwareData"`
	Hostname       string           `json:"hostname"`
	BootMACAddress string           `json:"bootMACAddress"`
	NICs           []nic            `json:"nics"`
	Addresses      []machineAddress `json:"addresses"`
}

// timings are wall-clock milliseconds between the client's own requests
// and what it observed by polling every 250 ms.
type timings struct {
	CreateToReady   int64 `json:"createToReady"`
	RebootPowerOff  int64 `json:"rebootPowerOff,omitempty"`
	RebootPowerOn   int64 `json:"rebootPowerOn,omitempty"`
	DeleteToRelease int64 `json:"deleteToRelease,omitempty"`
}

type summary struct {
	OK    bool   `json:"ok"`
	Phase string `json:"phase"`
	// Identity is who the server says the client is (SelfSubjectReview).
	Identity string `json:"identity"`
	// Claimable maps each HardwareData listed before claiming to its boot MAC.
	Claimable map[string]string `json:"claimable"`
	Host      *host             `json:"host,omitempty"`
	// NodeReuseAfterUpdate is spec.nodeReuse as the server returned it
	// after the client's full update (PUT) of the claim.
	NodeReuseAfterUpdate string   `json:"nodeReuseAfterUpdate"`
	Timings              timings  `json:"timings"`
	Checks               []check  `json:"checks"`
	Failures             []string `json:"failures"`
}

func newSummary(o options) *summary {
	return &summary{Phase: o.phase, Claimable: map[string]string{}, Checks: []check{}, Failures: []string{}}
}

// expect records one named check; it returns whether it passed.
func (f *flow) expect(name string, err error) bool {
	c := check{Name: name, OK: err == nil}
	if err != nil {
		c.Message = err.Error()
		f.s.Failures = append(f.s.Failures, fmt.Sprintf("%s: %v", name, err))
		klog.ErrorS(err, "check failed", "check", name)
	} else {
		klog.V(1).InfoS("check passed", "check", name)
	}
	f.s.Checks = append(f.s.Checks, c)
	return err == nil
}
