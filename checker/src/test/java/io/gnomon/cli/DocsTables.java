package io.gnomon.cli;

import java.math.BigDecimal;
import org.jooq.TableField;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.impl.SchemaImpl;
import org.jooq.impl.TableImpl;
import org.jooq.impl.UpdatableRecordImpl;

/**
 * What jOOQ's code generator writes for the docs' table {@code public.account (id integer primary key, owner text,
 * balance numeric(10,2))}, cut to what the docs' Java examples use; they are compiled against it.
 */
public final class DocsTables {
  /** The table {@code public.account}. */
  public static final Account ACCOUNT = Account.ACCOUNT;

  private DocsTables() {}

  /** The generated table class. */
  public static final class Account extends TableImpl<AccountRecord> {
    static final Account ACCOUNT = new Account();

    /** {@code account.id}. */
    public final TableField<AccountRecord, Integer> ID =
        createField(DSL.name("id"), SQLDataType.INTEGER.nullable(false), this);

    /** {@code account.owner}. */
    public final TableField<AccountRecord, String> OWNER =
        createField(DSL.name("owner"), SQLDataType.CLOB.nullable(false), this);

    /** {@code account.balance}. */
    public final TableField<AccountRecord, BigDecimal> BALANCE =
        createField(DSL.name("balance"), SQLDataType.NUMERIC(10, 2).nullable(false), this);

    private Account() {
      super(DSL.name("account"), new SchemaImpl(DSL.name("public")));
    }

    @Override
    public Class<AccountRecord> getRecordType() {
      return AccountRecord.class;
    }
  }

  /** The generated record class. */
  public static final class AccountRecord extends UpdatableRecordImpl<AccountRecord> {
    /** Creates an empty record. */
    public AccountRecord() {
      super(Account.ACCOUNT);
    }
  }
}
