/**
 * The verifier: {@link io.gnomon.checker.verify.Verifier} checks {@link io.gnomon.checker.verify.Observations} (the
 * history and what the database held afterwards) against Gnomon's invariants, one check per file, and returns a
 * {@link io.gnomon.checker.verify.Verification}: violations by kind, each with a witness in words. It reads no
 * database, so hand-built histories test it. Part of the checker's implementation, not an API.
 */
package io.gnomon.checker.verify;
