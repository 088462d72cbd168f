/** Private API of gnomon-feed: may change in any release; never referenced by a public signature. */
package io.gnomon.feed.internal;
