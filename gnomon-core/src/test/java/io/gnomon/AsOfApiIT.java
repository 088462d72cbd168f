package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import org.jooq.DSLContext;
import org.jooq.Result;
import org.jooq.SQLDialect;
import org.jooq.TableField;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.impl.SchemaImpl;
import org.jooq.impl.TableImpl;
import org.jooq.impl.UpdatableRecordImpl;
import org.junit.jupiter.api.Test;

/** As-of reads from Java: typed jOOQ records of the user's own table, and plain JDBC. */
class AsOfApiIT extends GnomonIT {

  /** What jOOQ's code generator would write for the user's table {@code public.account}. */
  static final class Account extends TableImpl<AccountRecord> {
    static final Account ACCOUNT = new Account();
    final TableField<AccountRecord, Integer> ID = createField(DSL.name("id"), SQLDataType.INTEGER.nullable(false), this);
    final TableField<AccountRecord, Long> BALANCE = createField(DSL.name("balance"), SQLDataType.BIGINT, this);
    final TableField<AccountRecord, String> OWNER = createField(DSL.name("owner"), SQLDataType.CLOB, this);

    private Account() {
      super(DSL.name("account"), new SchemaImpl(DSL.name("public")));
    }

    @Override
    public Class<AccountRecord> getRecordType() {
      return AccountRecord.class;
    }
  }

  /** The typed record. */
  public static final class AccountRecord extends UpdatableRecordImpl<AccountRecord> {
    public AccountRecord() {
      super(Account.ACCOUNT);
    }
  }

  @Test
  void jooqReadsReturnTypedRecordsOfTheUsersTable() throws Exception {
    sql("create table account (id int primary key, balance bigint, owner text)");
    gnomon().track("public.account");
    sql("insert into account values (1, 100, 'ada'), (2, 200, 'bob'), (3, 300, 'cy')");
    Coordinate before = gnomon().coordinate();
    sql("update account set balance = balance - 50 where id = 1");
    sql("delete from account where id = 2");
    try (Connection c = connect()) {
      DSLContext dsl = DSL.using(c, SQLDialect.POSTGRES);
      Account a = Account.ACCOUNT;
      Result<AccountRecord> then = gnomon().asOf(before).fetch(dsl, a, a.BALANCE.ge(100L));
      assertEquals(3, then.size());
      AccountRecord ada = then.stream().filter(r -> r.get(a.ID) == 1).findFirst().orElseThrow();
      assertEquals(100L, ada.get(a.BALANCE));
      assertEquals("ada", ada.get(a.OWNER));
      Result<AccountRecord> now = gnomon().asOf(gnomon().coordinate()).fetch(dsl, a);
      assertEquals(2, now.size());
      // the as-of table joins like any other
      var joined = dsl.configuration().derive(dsl.settings().withRenderSchema(false)).dsl()
          .select(DSL.count()).from(gnomon().asOf(before).table(a)).where(a.OWNER.in("ada", "bob")).fetchOne(0, int.class);
      assertEquals(2, joined);
    }
  }

  @Test
  void fetchRefusesATableThatDoesNotKnowItsColumns() throws Exception {
    sql("create table plain (id int primary key)");
    gnomon().track("plain");
    try (Connection c = connect()) {
      InvalidArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(InvalidArgumentException.class,
          () -> gnomon().asOf(gnomon().coordinate()).fetch(DSL.using(c, SQLDialect.POSTGRES), DSL.table(DSL.name("public", "plain"))));
      org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("AsOf.table"), e.getMessage());
    }
  }

  @Test
  void jdbcReadsBindTheCoordinate() throws Exception {
    sql("create table acct (id int primary key, v int)");
    gnomon().track("acct");
    sql("insert into acct values (1, 1)");
    AsOf before = gnomon().asOf(gnomon().coordinate());
    sql("update acct set v = 2");
    try (Connection c = connect();
        PreparedStatement ps = before.prepare(c, "acct", "id = ?")) {
      ps.setInt(2, 1);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertEquals(1, rs.getInt("v"));
      }
    }
    gnomon().tick();
    Instant now = Instant.now();
    try (Connection c = connect();
        PreparedStatement ps = gnomon().asOf(now).prepare(c, "acct", "")) {
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertEquals(2, rs.getInt("v"), "as of the last tick, after the update");
      }
    }
  }
}
