package replay

import "time"

func durationNS(ns int64) time.Duration { return time.Duration(ns) }
