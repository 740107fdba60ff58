package icetable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	ice "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/connectd/connectd/connectors/iceberg/icerow"
)

// ValidateIdentifierFields checks what Java's Schema constructor checks (iceberg-go does not):
// identifier fields must exist, be required primitives, and not be float/double.
func ValidateIdentifierFields(sc *ice.Schema, names []string) error {
	for _, n := range names {
		f, ok := sc.FindFieldByName(n)
		if !ok {
			return defErrorf("identifier field %q not found in schema", n)
		}
		if !f.Required {
			return defErrorf("identifier field %q must be required (not optional)", n)
		}
		switch f.Type.(type) {
		case ice.Float32Type, ice.Float64Type:
			return defErrorf("identifier field %q must not be a floating point type (%s)", n, f.Type)
		case *ice.StructType, *ice.ListType, *ice.MapType:
			return defErrorf("identifier field %q must be a primitive type (%s)", n, f.Type)
		}
	}
	return nil
}

// ParsePartitionBy splits "day(ts), bucket(id,16)" on commas outside parentheses.
func ParsePartitionBy(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				if p := strings.TrimSpace(s[start:i]); p != "" {
					out = append(out, p)
				}
				start = i + 1
			}
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		out = append(out, p)
	}
	return out
}

// BuildPartitionSpec turns the Apache sink's partition-by terms into a spec:
// year(s)/month(s)/day(s)/hour(s)(col), bucket(col,N), truncate(col,W), or a plain column.
func BuildPartitionSpec(sc *ice.Schema, terms []string) (ice.PartitionSpec, error) {
	var opts []ice.PartitionOption
	for _, t := range terms {
		t = strings.TrimSpace(t)
		open := strings.IndexByte(t, '(')
		if open < 0 {
			opts = append(opts, ice.AddPartitionFieldByName(t, t, ice.IdentityTransform{}, sc, nil))
			continue
		}
		if !strings.HasSuffix(t, ")") {
			return ice.PartitionSpec{}, fmt.Errorf("bad partition term %q", t)
		}
		fn := strings.ToLower(strings.TrimSpace(t[:open]))
		args := strings.Split(t[open+1:len(t)-1], ",")
		for i := range args {
			args[i] = strings.TrimSpace(args[i])
		}
		col := args[0]
		var tr ice.Transform
		var name string
		switch fn {
		case "year", "years":
			tr, name = ice.YearTransform{}, col+"_year"
		case "month", "months":
			tr, name = ice.MonthTransform{}, col+"_month"
		case "day", "days":
			tr, name = ice.DayTransform{}, col+"_day"
		case "hour", "hours":
			tr, name = ice.HourTransform{}, col+"_hour"
		case "bucket", "truncate":
			if len(args) != 2 {
				return ice.PartitionSpec{}, fmt.Errorf("%s needs (col, N): %q", fn, t)
			}
			n, err := strconv.Atoi(args[1])
			if err != nil {
				// Java also accepts bucket(N, col)
				if n2, err2 := strconv.Atoi(args[0]); err2 == nil {
					n, col = n2, args[1]
				} else {
					return ice.PartitionSpec{}, fmt.Errorf("bad width in %q", t)
				}
			}
			if fn == "bucket" {
				tr, name = ice.BucketTransform{NumBuckets: n}, col+"_bucket"
			} else {
				tr, name = ice.TruncateTransform{Width: n}, col+"_trunc"
			}
		default:
			return ice.PartitionSpec{}, defErrorf("unknown partition transform %q", fn)
		}
		opts = append(opts, ice.AddPartitionFieldByName(col, name, tr, sc, nil))
	}
	return ice.NewPartitionSpecOpts(opts...)
}

// CreateTable auto-creates ident with the record schema, identifier fields and partition spec.
func CreateTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier, st *ice.StructType, opts TableOptions) (*table.Table, error) {
	if st == nil {
		return nil, defErrorf("cannot auto-create a table without a record schema")
	}
	fields := slices.Clone(st.FieldList)
	var ids []int
	for _, idc := range opts.IDColumns {
		found := false
		for i := range fields {
			if fields[i].Name == idc || (opts.CaseInsensitive && strings.EqualFold(fields[i].Name, idc)) {
				fields[i].Required = true // identifier fields must be required
				ids = append(ids, fields[i].ID)
				found = true
			}
		}
		if !found {
			return nil, defErrorf("id column %q not in record schema for %s", idc, strings.Join(ident, "."))
		}
	}
	if opts.ForceOptional {
		for i := range fields {
			if !slices.Contains(ids, fields[i].ID) {
				fields[i].Required = false
			}
		}
	}
	props := ice.Properties{"format-version": "2", "write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}
	for k, v := range opts.AutoCreateProps {
		props[k] = v
	}
	version := formatVersion(props)
	for i := range fields {
		fields[i].Type = icerow.TypeForFormat(fields[i].Type, version)
	}
	sc := ice.NewSchemaWithIdentifiers(0, ids, fields...)
	if err := ValidateIdentifierFields(sc, opts.IDColumns); err != nil {
		return nil, err
	}
	spec, err := BuildPartitionSpec(sc, opts.PartitionBy)
	if err != nil {
		return nil, err
	}
	if ns := catalog.NamespaceFromIdent(ident); len(ns) > 0 {
		if ok, err := cat.CheckNamespaceExists(ctx, ns); err == nil && !ok {
			if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
				return nil, fmt.Errorf("create namespace: %w", err)
			}
		}
	}
	createOpts := []catalog.CreateTableOpt{catalog.WithPartitionSpec(&spec), catalog.WithProperties(props)}
	if len(opts.SortOrder) > 0 {
		order, err := BuildSortOrder(sc, opts.SortOrder, opts.CaseInsensitive)
		if err != nil {
			return nil, defErrorf("%s: %v", strings.Join(ident, "."), err)
		}
		createOpts = append(createOpts, catalog.WithSortOrder(order))
	}
	tbl, err := cat.CreateTable(ctx, ident, sc, createOpts...)
	if err != nil {
		if errors.Is(err, catalog.ErrTableAlreadyExists) {
			return cat.LoadTable(ctx, ident)
		}
		return nil, err
	}
	return tbl, nil
}

// formatVersion is the table format version that table properties ask for (2 when unset).
func formatVersion(props ice.Properties) int {
	if v, err := strconv.Atoi(props["format-version"]); err == nil {
		return v
	}
	return 2
}
