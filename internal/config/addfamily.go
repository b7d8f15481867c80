package config

// AddFamily is AddWith with the family by name, as qpslab configs add
// --family gives it ("": from the file's extension).
func (s Store) AddFamily(name, file, family string, o AddOptions) (Config, error) {
	if family != "" {
		f, err := ParseFamily(family)
		if err != nil {
			return Config{}, err
		}
		o.Family = f
	}
	return s.AddWith(name, file, o)
}
