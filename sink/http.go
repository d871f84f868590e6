package sink

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cronsheet/sink/index"
)

// Defaults of HTTPConfig.
const (
	DefaultIndex       = "cronsheet-job-events"
	DefaultHTTPTimeout = 10 * time.Second
)

// HTTPConfig configures a sink that posts Elasticsearch bulk requests.
type HTTPConfig struct {
	// URL receives the bulk requests, e.g. http://es:9200/_bulk. User and
	// password in the URL are sent as basic auth. Required.
	URL string
	// Index names every document's _index: a template that may hold
	// {service} and {date} (package index). Default DefaultIndex.
	Index string
	// Timeout bounds each request. Default DefaultHTTPTimeout.
	Timeout time.Duration
	// Queue bounds the queue and sets the retry backoff.
	Queue QueueConfig
}

// NewHTTP validates cfg and returns a sink that posts each batch to cfg.URL
// as one Elasticsearch bulk request: Content-Type application/x-ndjson, and
// per event an action line {"index":{"_index":…,"_id":…}} (the index
// cfg.Index expanded for the event's service and day) followed by its
// document. Connection errors, 408, 429 and 5xx
// are retried; other answers outside 2xx refuse the batch. A 2xx bulk answer
// with "errors":true is logged, and its items with status 429 are retried.
// Any other 2xx answer counts as accepted, so a plain HTTP endpoint that
// reads NDJSON works too. logger may be nil.
func NewHTTP(logger *slog.Logger, cfg HTTPConfig) (*Sink, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("sink http config: url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sink http config: url %q is not an http(s) URL", u.Redacted())
	}
	if cfg.Timeout < 0 {
		return nil, errors.New("sink http config: timeout must not be negative")
	}
	tmpl, err := index.Parse(cmp.Or(cfg.Index, DefaultIndex))
	if err != nil {
		return nil, fmt.Errorf("sink http config: index: %w", err)
	}
	q, err := cfg.Queue.withDefaults()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	h := &httpTransport{
		url:     u.String(),
		index:   tmpl,
		timeout: cmp.Or(cfg.Timeout, DefaultHTTPTimeout),
		client:  &http.Client{Transport: tr},
		tr:      tr,
	}
	return newSink(logger, "sink.http", q, h), nil
}

// httpTransport posts Elasticsearch bulk requests.
type httpTransport struct {
	url     string
	index   index.Template
	timeout time.Duration
	client  *http.Client
	tr      *http.Transport
}

func (h *httpTransport) close() { h.tr.CloseIdleConnections() }

func (h *httpTransport) send(ctx context.Context, batch []item) ([]item, int, error) {
	body, batch, refused, err := h.bulkBody(batch)
	if len(batch) == 0 {
		return nil, refused, err
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, refused + len(batch), fmt.Errorf("bulk request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := h.client.Do(req)
	if err != nil {
		return batch, refused, fmt.Errorf("post bulk: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return batch, refused, fmt.Errorf("read bulk answer: %w", err)
	}
	switch code := resp.StatusCode; {
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return batch, refused, fmt.Errorf("post bulk: %s: %s", resp.Status, snippet(answer))
	case code < 200 || code > 299:
		return nil, refused + len(batch), fmt.Errorf("post bulk: %s: %s", resp.Status, snippet(answer))
	}
	retry, bad, err := bulkOutcome(batch, answer)
	return retry, refused + bad, err
}

// bulkBody encodes batch as NDJSON. Events that cannot be encoded (a time
// outside JSON's years) are left out and counted.
func (h *httpTransport) bulkBody(batch []item) ([]byte, []item, int, error) {
	var buf bytes.Buffer
	kept := batch[:0:0]
	var firstErr error
	for _, it := range batch {
		doc, err := it.document()
		if err != nil {
			firstErr = cmp.Or(firstErr, fmt.Errorf("encode event of %s: %w", it.key(), err))
			continue
		}
		action, _ := json.Marshal(map[string]map[string]string{"index": {"_index": h.index.Expand(it.service(), it.at()), "_id": it.docID()}})
		buf.Write(action)
		buf.WriteByte('\n')
		buf.Write(doc)
		buf.WriteByte('\n')
		kept = append(kept, it)
	}
	return buf.Bytes(), kept, len(batch) - len(kept), firstErr
}

// bulkAnswer is the part of an Elasticsearch bulk answer the sink reads.
type bulkAnswer struct {
	Errors bool `json:"errors"`
	Items  []map[string]struct {
		Status int             `json:"status"`
		Error  json.RawMessage `json:"error"`
	} `json:"items"`
}

// bulkOutcome reads a 2xx answer: without "errors":true everything went
// in; otherwise items answered 429 are retried and other failed items
// refused, the first error of each kind returned.
func bulkOutcome(batch []item, answer []byte) ([]item, int, error) {
	var a bulkAnswer
	if json.Unmarshal(answer, &a) != nil || !a.Errors {
		return nil, 0, nil
	}
	var retry []item
	refused := 0
	var retryErr, refusedErr error
	for i, res := range a.Items {
		if i >= len(batch) {
			break
		}
		for _, r := range res {
			if r.Status >= 200 && r.Status <= 299 {
				continue
			}
			err := fmt.Errorf("bulk item %s: status %d: %s", batch[i].docID(), r.Status, snippet(r.Error))
			if r.Status == http.StatusTooManyRequests {
				retry = append(retry, batch[i])
				retryErr = cmp.Or(retryErr, err)
			} else {
				refused++
				refusedErr = cmp.Or(refusedErr, err)
			}
		}
	}
	if err := errors.Join(refusedErr, retryErr); err != nil {
		return retry, refused, err
	}
	return nil, 0, fmt.Errorf("bulk answer has errors: %s", snippet(answer))
}

// snippet is the start of an answer, for errors.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}
