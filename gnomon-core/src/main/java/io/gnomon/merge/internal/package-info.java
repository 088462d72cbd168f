/**
 * Private API of the merge strategies: may change in any release; never referenced by a public signature. Use
 * {@link io.gnomon.merge.Strategies} instead.
 */
package io.gnomon.merge.internal;
