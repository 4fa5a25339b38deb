package gpu

func recordingFromEnv(cfg *config, ranks int, sites *siteTable) (*recorder, error) { return nil, nil }
