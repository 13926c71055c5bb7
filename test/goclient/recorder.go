package main

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// requestRecord is one HTTP request to the hostclaims resource, as it left
// the client: it is how the program tells which protocol the informer's
// reflector really spoke (a WatchList stream or a LIST followed by a WATCH),
// rather than trusting what the feature gate says it should do.
type requestRecord struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query"`
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
}

func (r requestRecord) values() url.Values {
	v, err := url.ParseQuery(r.Query)
	if err != nil {
		return url.Values{}
	}
	return v
}

// isWatch reports a watch request, whichever way it was spelled.
func (r requestRecord) isWatch() bool {
	v := r.values().Get("watch")
	return v == "true" || v == "1"
}

// isWatchList reports a streaming-list request (KEP-3157).
func (r requestRecord) isWatchList() bool {
	return r.isWatch() && r.values().Get("sendInitialEvents") == "true"
}

// isCollectionList reports a plain LIST of the collection (not a GET of one object).
func (r requestRecord) isCollectionList() bool {
	return r.Method == http.MethodGet && !r.isWatch() && strings.HasSuffix(r.Path, "/hostclaims")
}

// recorder wraps a client's transport and remembers every request whose
// path touches hostclaims (discovery and other traffic is left out).
type recorder struct {
	mu      sync.Mutex
	records []requestRecord
}

func (rec *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if strings.Contains(req.URL.Path, "/hostclaims") {
			r := requestRecord{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery}
			if err != nil {
				r.Error = err.Error()
			} else {
				r.Status = resp.StatusCode
			}
			rec.mu.Lock()
			rec.records = append(rec.records, r)
			rec.mu.Unlock()
		}
		return resp, err
	})
}

func (rec *recorder) snapshot() []requestRecord {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]requestRecord(nil), rec.records...)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// reflectorReport summarises what the informer's requests say about its mode.
type reflectorReport struct {
	// Mode is "watchlist" (streamed the initial state, no LIST), "list-watch"
	// (LIST then WATCH, no sendInitialEvents), "watchlist-fallback" (asked
	// for a stream, then fell back to LIST), or "none".
	Mode              string          `json:"mode"`
	WatchListRequests int             `json:"watchListRequests"`
	ListRequests      int             `json:"listRequests"`
	WatchRequests     int             `json:"watchRequests"`
	FirstWatchList    *requestRecord  `json:"firstWatchList,omitempty"`
	FirstList         *requestRecord  `json:"firstList,omitempty"`
	Requests          []requestRecord `json:"requests"`
}

func summariseReflector(records []requestRecord) reflectorReport {
	rep := reflectorReport{Requests: records}
	for i := range records {
		r := records[i]
		switch {
		case r.isWatchList():
			rep.WatchListRequests++
			if rep.FirstWatchList == nil {
				rep.FirstWatchList = &r
			}
		case r.isWatch():
			rep.WatchRequests++
		case r.isCollectionList():
			rep.ListRequests++
			if rep.FirstList == nil {
				rep.FirstList = &r
			}
		}
	}
	switch {
	case rep.WatchListRequests > 0 && rep.ListRequests == 0:
		rep.Mode = "watchlist"
	case rep.WatchListRequests > 0:
		rep.Mode = "watchlist-fallback"
	case rep.ListRequests > 0:
		rep.Mode = "list-watch"
	default:
		rep.Mode = "none"
	}
	return rep
}
