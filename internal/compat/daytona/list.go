package daytona

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbxhq/sbx/internal/store"
	"github.com/sbxhq/sbx/wire"
)

// Listing: every filter and sort of Daytona's listSandboxes is applied to
// the sandboxes as Daytona sees them (their DTOs); a parameter sbx cannot
// honour is a 400 that names it.

// listPage is Daytona's ListSandboxesResponse.
type listPage struct {
	Items      []sandboxDTO `json:"items"`
	NextCursor *string      `json:"nextCursor"`
}

const (
	defaultPageSize = 100
	maxPageSize     = 200
)

// listFilter is one filter: whether d passes for the parameter's values.
type listFilter func(d *sandboxDTO, vals []string) (bool, error)

func prefixOf(field func(*sandboxDTO) string) listFilter {
	return func(d *sandboxDTO, v []string) (bool, error) { return strings.HasPrefix(field(d), v[0]), nil }
}

func oneOf(field func(*sandboxDTO) string) listFilter {
	return func(d *sandboxDTO, v []string) (bool, error) { return slices.Contains(v, field(d)), nil }
}

func bound(field func(*sandboxDTO) float64, min bool) listFilter {
	return func(d *sandboxDTO, v []string) (bool, error) {
		n, err := strconv.ParseFloat(v[0], 64)
		if err != nil {
			return false, err
		}
		if min {
			return field(d) >= n, nil
		}
		return field(d) <= n, nil
	}
}

func timeBound(field func(*sandboxDTO) string, after bool) listFilter {
	return func(d *sandboxDTO, v []string) (bool, error) {
		t, err := time.Parse(time.RFC3339Nano, v[0])
		if err != nil {
			return false, err
		}
		at := parseStamp(field(d))
		if at.IsZero() { // no such time: nothing to compare
			return false, nil
		}
		if after {
			return at.After(t), nil
		}
		return at.Before(t), nil
	}
}

func flag(field func(*sandboxDTO) bool) listFilter {
	return func(d *sandboxDTO, v []string) (bool, error) {
		b, err := strconv.ParseBool(v[0])
		return field(d) == b, err
	}
}

var (
	cpuOf    = func(d *sandboxDTO) float64 { return float64(d.CPU) }
	memOf    = func(d *sandboxDTO) float64 { return float64(d.Memory) }
	diskOf   = func(d *sandboxDTO) float64 { return float64(d.Disk) }
	gpuOf    = func(d *sandboxDTO) float64 { return float64(d.GPU) }
	created  = func(d *sandboxDTO) string { return d.CreatedAt }
	activity = func(d *sandboxDTO) string { return d.LastActivityAt }
	destroy  = func(d *sandboxDTO) string { return d.AutoDestroyAt }
)

// listFilters are the query parameters that filter, by name.
var listFilters = map[string]listFilter{
	"id":                  prefixOf(func(d *sandboxDTO) string { return d.ID }),
	"name":                prefixOf(func(d *sandboxDTO) string { return d.Name }),
	"states":              oneOf(func(d *sandboxDTO) string { return d.State }),
	"snapshots":           oneOf(func(d *sandboxDTO) string { return d.Snapshot }),
	"regionIds":           oneOf(func(d *sandboxDTO) string { return d.Target }),
	"sandboxClasses":      oneOf(func(d *sandboxDTO) string { return d.SandboxClass }),
	"minCpu":              bound(cpuOf, true),
	"maxCpu":              bound(cpuOf, false),
	"minMemoryGiB":        bound(memOf, true),
	"maxMemoryGiB":        bound(memOf, false),
	"minDiskGiB":          bound(diskOf, true),
	"maxDiskGiB":          bound(diskOf, false),
	"minGpu":              bound(gpuOf, true),
	"maxGpu":              bound(gpuOf, false),
	"isPublic":            flag(func(d *sandboxDTO) bool { return d.Public }),
	"isRecoverable":       flag(func(d *sandboxDTO) bool { return d.Recoverable }),
	"createdAtAfter":      timeBound(created, true),
	"createdAtBefore":     timeBound(created, false),
	"lastEventAfter":      timeBound(activity, true),
	"lastEventBefore":     timeBound(activity, false),
	"autoDestroyAtAfter":  timeBound(destroy, true),
	"autoDestroyAtBefore": timeBound(destroy, false),
}

// listSorts are the sort fields, each a comparison.
var listSorts = map[string]func(a, b *sandboxDTO) int{
	"name":           func(a, b *sandboxDTO) int { return cmp.Compare(a.Name, b.Name) },
	"cpu":            func(a, b *sandboxDTO) int { return cmp.Compare(a.CPU, b.CPU) },
	"memoryGib":      func(a, b *sandboxDTO) int { return cmp.Compare(a.Memory, b.Memory) },
	"diskGib":        func(a, b *sandboxDTO) int { return cmp.Compare(a.Disk, b.Disk) },
	"lastActivityAt": func(a, b *sandboxDTO) int { return parseStamp(a.LastActivityAt).Compare(parseStamp(b.LastActivityAt)) },
	"createdAt":      func(a, b *sandboxDTO) int { return parseStamp(a.CreatedAt).Compare(parseStamp(b.CreatedAt)) },
}

// parseStamp reads a stamp back; "" is the zero time.
func parseStamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// listSandboxes answers a page of sandboxes, oldest first unless sorted
// otherwise; the cursor is the offset of the next page.
func (h *Handler) listSandboxes(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := store.Filter{}
	if l := q.Get("labels"); l != "" {
		if err := json.Unmarshal([]byte(l), &f.Labels); err != nil {
			return invalid(wire.CodeInvalidLabel, "labels must be a JSON object of strings, got %q", l)
		}
	}
	offset, limit, err := pageParams(q)
	if err != nil {
		return err
	}
	order, err := listOrder(q)
	if err != nil {
		return err
	}
	for name := range q {
		switch {
		case listFilters[name] != nil, slices.Contains([]string{"cursor", "limit", "labels", "sort", "order", "includeErroredDeleted"}, name):
			// sbx keeps no deleted sandboxes, errored or not: includeErroredDeleted has nothing to add
		case name == "includeWarm" && q.Get(name) == "false":
		default:
			return invalid(wire.CodeInvalidParameter, "the list filter %s is not supported by sbx's Daytona compatibility layer", name)
		}
	}
	list, err := h.cfg.Sandboxes.List(r.Context(), f)
	if err != nil {
		return err
	}
	keep := []sandboxDTO{}
	for _, sb := range list {
		d := toDTO(sb, toolboxURL(r))
		ok, err := passes(&d, q)
		if err != nil {
			return err
		}
		if ok {
			keep = append(keep, d)
		}
	}
	slices.SortStableFunc(keep, func(a, b sandboxDTO) int { return order(&a, &b) })
	page := listPage{}
	page.Items, page.NextCursor = pageOf(keep, offset, limit)
	writeJSON(w, http.StatusOK, page)
	return nil
}

// pageParams reads a paginated list's cursor (an offset this server gave
// out) and limit.
func pageParams(q url.Values) (offset, limit int, err error) {
	limit = defaultPageSize
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			return 0, 0, invalid(wire.CodeInvalidParameter, "cursor %q is not one this server gave out", c)
		}
		offset = n
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxPageSize {
			return 0, 0, invalid(wire.CodeInvalidParameter, "limit must be a whole number from 1 to %d, got %q", maxPageSize, l)
		}
		limit = n
	}
	return offset, limit, nil
}

// pageOf is the page of items at offset, and the cursor of the next (nil
// after the last).
func pageOf[T any](items []T, offset, limit int) ([]T, *string) {
	page := []T{}
	for i := offset; i < len(items) && i < offset+limit; i++ {
		page = append(page, items[i])
	}
	if offset+limit < len(items) {
		next := strconv.Itoa(offset + limit)
		return page, &next
	}
	return page, nil
}

func passes(d *sandboxDTO, q url.Values) (bool, error) {
	for name, vals := range q {
		fn := listFilters[name]
		if fn == nil || len(vals) == 0 || vals[0] == "" {
			continue
		}
		ok, err := fn(d, vals)
		if err != nil {
			return false, invalid(wire.CodeInvalidParameter, "list filter %s: %q is not a valid value", name, vals[0])
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// listOrder is the comparison of sort and order (createdAt, asc default).
func listOrder(q url.Values) (func(a, b *sandboxDTO) int, error) {
	field, dir := cmp.Or(q.Get("sort"), "createdAt"), cmp.Or(q.Get("order"), "asc")
	by := listSorts[field]
	if by == nil {
		return nil, invalid(wire.CodeInvalidParameter, "sort %q is not one of name, cpu, memoryGib, diskGib, lastActivityAt, createdAt", field)
	}
	switch dir {
	case "asc":
		return by, nil
	case "desc":
		return func(a, b *sandboxDTO) int { return by(b, a) }, nil
	}
	return nil, invalid(wire.CodeInvalidParameter, "order %q is not asc or desc", dir)
}
