// Package catalogx opens Iceberg catalogs from the JVM sink's `iceberg.catalog.*` properties and links the
// file IO backends and catalog implementations a build carries.
package catalogx
