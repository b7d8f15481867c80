package host

// CheckFor is qpslab host check's: the host under r, with the risk of
// pinning the server to serverCPUs and the client to clientCPUs (either
// may be "") where they overlap, and the storage of datadir.
func CheckFor(r Roots, serverCPUs, clientCPUs, datadir string) (*Check, error) {
	c, err := Inspect(r)
	if err != nil {
		return nil, err
	}
	if serverCPUs != "" || clientCPUs != "" {
		risk, err := PinningRisk(serverCPUs, clientCPUs, c.CPUs)
		if err != nil {
			return nil, err
		}
		if risk != nil {
			c.Risks = append(c.Risks, *risk)
		}
	}
	c.Storage = StorageOf(r, datadir)
	return c, nil
}
