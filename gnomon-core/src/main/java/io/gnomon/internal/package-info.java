/** Private API of gnomon-core: may change in any release; never referenced by a public signature. */
package io.gnomon.internal;
