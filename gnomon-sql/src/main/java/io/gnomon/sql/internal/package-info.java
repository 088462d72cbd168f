/**
 * Private API of gnomon-sql: may change in any release without notice; never referenced by a public signature (an
 * ArchUnit test in gnomon-core checks it).
 *
 * <p>{@code io.gnomon.sql.internal.generated} holds the jOOQ classes generated from the migrated {@code gnomon}
 * catalog (tables, records, keys and the routines that let Java call {@code gnomon.track(...)} and the other catalog
 * functions). They are regenerated, never edited by hand: see {@code docs/sql-codegen.md}. The bindings in this
 * package map PostgreSQL types that jOOQ does not know ({@code pg_snapshot}, {@code xid8}) for the generated code.
 */
package io.gnomon.sql.internal;
