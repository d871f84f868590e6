package webtable_test

import (
	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// previewAnswer is the answer of GET /api/v1/schedule/preview.
type previewAnswer struct {
	Canonical string   `json:"canonical"`
	Once      bool     `json:"once"`
	Fires     []string `json:"fires"`
}

func TestPreview(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t) // the preview touches no table; one store serves every case

	tests := []struct {
		name  string
		query url.Values
		want  previewAnswer
	}{
		{
			name:  "EveryFromDefaultNow",
			query: url.Values{"when": {"every 60s"}, "n": {"3"}},
			want: previewAnswer{Canonical: "every 1m", Fires: []string{
				"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z"}},
		},
		{
			name:  "EveryAnchoredAtFrom",
			query: url.Values{"when": {"every 90m"}, "n": {"2"}, "from": {"2026-05-05T10:00:07+02:00"}},
			want: previewAnswer{Canonical: "every 90m", Fires: []string{
				"2026-05-05T09:30:07Z", "2026-05-05T11:00:07Z"}},
		},
		{
			name:  "FractionalFromRoundsUp",
			query: url.Values{"when": {"every 30s"}, "n": {"1"}, "from": {"2026-01-01T00:00:00.9Z"}},
			want:  previewAnswer{Canonical: "every 30s", Fires: []string{"2026-01-01T00:00:31Z"}},
		},
		{
			name:  "DailyDefaultFive",
			query: url.Values{"when": {"daily 8:30"}},
			want: previewAnswer{Canonical: "daily 08:30", Fires: []string{
				"2026-01-01T08:30:00Z", "2026-01-02T08:30:00Z", "2026-01-03T08:30:00Z",
				"2026-01-04T08:30:00Z", "2026-01-05T08:30:00Z"}},
		},
		{
			name:  "TZParam",
			query: url.Values{"when": {"daily 08:30"}, "tz": {"Asia/Shanghai"}, "n": {"2"}},
			want: previewAnswer{Canonical: "daily 08:30", Fires: []string{
				"2026-01-01T08:30:00+08:00", "2026-01-02T08:30:00+08:00"}},
		},
		{
			name:  "TZSuffixWins",
			query: url.Values{"when": {"daily 08:30 tz Asia/Tokyo"}, "tz": {"Asia/Shanghai"}, "n": {"1"}},
			want: previewAnswer{Canonical: "daily 08:30 tz Asia/Tokyo", Fires: []string{
				"2026-01-02T08:30:00+09:00"}}, // 00:00Z is 09:00 in Tokyo
		},
		{
			name: "SpringForwardGap",
			query: url.Values{"when": {"daily 02:30"}, "tz": {"America/New_York"}, "n": {"3"},
				"from": {"2026-03-07T12:00:00-05:00"}},
			want: previewAnswer{Canonical: "daily 02:30", Fires: []string{
				"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}},
		},
		{
			name: "FallBackOverlap",
			query: url.Values{"when": {"daily 01:30"}, "tz": {"America/New_York"}, "n": {"2"},
				"from": {"2026-10-31T12:00:00-04:00"}},
			want: previewAnswer{Canonical: "daily 01:30", Fires: []string{
				"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		},
		{
			name:  "Once",
			query: url.Values{"when": {"at 2026-12-01 15:00"}, "n": {"5"}},
			want:  previewAnswer{Canonical: "at 2026-12-01 15:00", Once: true, Fires: []string{"2026-12-01T15:00:00Z"}},
		},
		{
			name:  "OncePassed",
			query: url.Values{"when": {"at 2025-12-01 15:00"}},
			want:  previewAnswer{Canonical: "at 2025-12-01 15:00", Once: true, Fires: []string{}},
		},
		{
			name:  "ScenarioAlias",
			query: url.Values{"when": {"每天早上8点"}, "scenario": {"memos"}, "n": {"1"}},
			want:  previewAnswer{Canonical: "daily 08:00", Fires: []string{"2026-01-01T08:00:00Z"}},
		},
		{
			// 2026-01-01 is a Thursday.
			name:  "ChineseWeekly",
			query: url.Values{"when": {"每周一 10点"}, "tz": {"Asia/Shanghai"}, "n": {"1"}},
			want:  previewAnswer{Canonical: "weekly mon 10:00", Fires: []string{"2026-01-05T10:00:00+08:00"}},
		},
		{
			name:  "ChineseMonthEnd",
			query: url.Values{"when": {"每月最后一天 18:00"}, "n": {"2"}},
			want:  previewAnswer{Canonical: "monthly last 18:00", Fires: []string{"2026-01-31T18:00:00Z", "2026-02-28T18:00:00Z"}},
		},
		{
			name:  "ChineseInterval",
			query: url.Values{"when": {"每隔5分钟"}, "n": {"2"}},
			want:  previewAnswer{Canonical: "every 5m", Fires: []string{"2026-01-01T00:05:00Z", "2026-01-01T00:10:00Z"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := apitest.Want[previewAnswer](t, b.Do(t, http.MethodGet, "/api/v1/schedule/preview?"+tt.query.Encode(), ""), http.StatusOK)
			if got.Canonical != tt.want.Canonical || got.Once != tt.want.Once || !slices.Equal(got.Fires, tt.want.Fires) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestPreviewErrors(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)

	tests := []struct {
		name   string
		query  url.Values
		status int
		field  string
		msg    string
	}{
		{"Typo", url.Values{"when": {"dayly 8:00"}}, 400, "when", `unknown word "dayly"`},
		{"TypoInScenario", url.Values{"when": {"dayly 8:00"}, "scenario": {"memos"}}, 400, "when", `unknown word "dayly"`},
		{"TypoSuggests", url.Values{"when": {"weekly mnday 9:00"}}, 400, "when", `did you mean "monday"?`},
		{"ChineseUnknownDay", url.Values{"when": {"每周八 9点"}}, 400, "when", `unknown day of the week`},
		{"Missing", url.Values{}, 400, "when", "required"},
		{"TooLong", url.Values{"when": {string(make([]byte, 2000))}}, 400, "when", "longer than"},
		{"NZero", url.Values{"when": {"every 1m"}, "n": {"0"}}, 400, "n", "from 1 to 100"},
		{"NTooBig", url.Values{"when": {"every 1m"}, "n": {"101"}}, 400, "n", "from 1 to 100"},
		{"BadFrom", url.Values{"when": {"every 1m"}, "from": {"tomorrow"}}, 400, "from", "RFC 3339"},
		{"FromYearOne", url.Values{"when": {"every 1m"}, "from": {"0001-01-01T00:00:00Z"}}, 400, "from", "out of range"},
		{"FromBeforeEpoch", url.Values{"when": {"daily 08:00"}, "from": {"1960-01-01T00:00:00Z"}}, 400, "from", "out of range"},
		{"BadTZ", url.Values{"when": {"every 1m"}, "tz": {"Mars/Olympus"}}, 400, "tz", "IANA"},
		{"LocalTZ", url.Values{"when": {"every 1m"}, "tz": {"Local"}}, 400, "tz", "IANA"},
		{"UnknownScenario", url.Values{"when": {"every 1m"}, "scenario": {"nope"}}, 404, "", `unknown scenario "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := b.Do(t, http.MethodGet, "/api/v1/schedule/preview?"+tt.query.Encode(), "")
			apitest.WantError(t, rec, tt.status, tt.field, tt.msg)
		})
	}
}
