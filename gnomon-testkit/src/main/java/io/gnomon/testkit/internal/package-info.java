/**
 * Private API of the Gnomon testkit: process control, binaries, directories and JDBC plumbing.
 *
 * <p>Nothing in this package is supported for use outside {@code gnomon-testkit}; it may change in
 * any release without notice. Use the types in {@link io.gnomon.testkit} instead.
 */
package io.gnomon.testkit.internal;
