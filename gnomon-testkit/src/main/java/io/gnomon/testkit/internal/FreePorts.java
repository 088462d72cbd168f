package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * Picking a free loopback port. Another process may take it before PostgreSQL binds it; the first
 * start of a cluster therefore retries with a new port when the bind fails.
 */
final class FreePorts {

  private FreePorts() {}

  static int pick() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new PgClusterException("Could not find a free port on 127.0.0.1: " + e.getMessage(), e);
    }
  }
}
