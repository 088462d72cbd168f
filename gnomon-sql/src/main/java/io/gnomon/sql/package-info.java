/**
 * Gnomon's SQL layer: installs and checks the {@code gnomon} catalog ({@link io.gnomon.sql.Catalog}) and names
 * Gnomon's own SQLSTATEs ({@link io.gnomon.sql.GnomonSqlState}).
 *
 * <p>The catalog lives in the {@code gnomon} schema and is managed by Flyway with its own history table,
 * {@code gnomon.flyway_schema_history}; per-table objects live in {@code gnomon_t} and are written only by
 * {@code gnomon.track(...)}.
 */
package io.gnomon.sql;
