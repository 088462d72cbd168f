/**
 * A check's run on PostgreSQL: the servers and failover ({@code Servers}), the tables ({@code Schema}), the sessions
 * ({@code Session}, {@code Workload}, {@code WorkloadRun}), the faults ({@code Faults}, {@code Amcheck}), the feed
 * consumer ({@code FeedSink}), the mutants ({@code Mutants}), and what is read back for the verifier ({@code
 * Collector}). Part of the checker's implementation, not an API.
 */
package io.gnomon.checker.run;
