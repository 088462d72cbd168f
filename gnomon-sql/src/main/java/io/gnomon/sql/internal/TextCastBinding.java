package io.gnomon.sql.internal;

import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Types;
import org.jooq.Binding;
import org.jooq.BindingGetResultSetContext;
import org.jooq.BindingGetSQLInputContext;
import org.jooq.BindingGetStatementContext;
import org.jooq.BindingRegisterContext;
import org.jooq.BindingSQLContext;
import org.jooq.BindingSetSQLOutputContext;
import org.jooq.BindingSetStatementContext;
import org.jooq.Converter;
import org.jooq.conf.ParamType;
import org.jooq.impl.DSL;

/**
 * Binds a PostgreSQL type that jOOQ does not know through its text form: values are sent as text and cast on the
 * server ({@code ?::pg_catalog.type}), and read back with {@code getString}. Without it jOOQ sends such values as
 * {@code varchar}, which PostgreSQL refuses to assign, and reads them as driver-specific objects.
 *
 * @param <U> the Java type of the values
 */
abstract class TextCastBinding<U> implements Binding<Object, U> {
  private final String sqlType;

  /** @param sqlType the qualified type name to cast to, such as {@code pg_catalog.pg_snapshot} */
  TextCastBinding(String sqlType) {
    this.sqlType = sqlType;
  }

  /** The text form of a value. */
  abstract String toText(U value);

  /** The value of a text form. */
  abstract U fromText(String text);

  /** The Java type of the values. */
  abstract Class<U> userType();

  @Override
  public final Converter<Object, U> converter() {
    return Converter.ofNullable(Object.class, userType(), db -> fromText(db.toString()), this::toText);
  }

  @Override
  public final void sql(BindingSQLContext<U> ctx) {
    if (ctx.render().paramType() == ParamType.INLINED) {
      U value = ctx.value();
      ctx.render().visit(DSL.inline(value == null ? null : toText(value))).sql("::").sql(sqlType);
    } else {
      ctx.render().sql(ctx.variable()).sql("::").sql(sqlType);
    }
  }

  @Override
  public final void register(BindingRegisterContext<U> ctx) throws SQLException {
    ctx.statement().registerOutParameter(ctx.index(), Types.VARCHAR);
  }

  @Override
  public final void set(BindingSetStatementContext<U> ctx) throws SQLException {
    U value = ctx.value();
    ctx.statement().setString(ctx.index(), value == null ? null : toText(value));
  }

  @Override
  public final void get(BindingGetResultSetContext<U> ctx) throws SQLException {
    String text = ctx.resultSet().getString(ctx.index());
    ctx.value(text == null ? null : fromText(text));
  }

  @Override
  public final void get(BindingGetStatementContext<U> ctx) throws SQLException {
    String text = ctx.statement().getString(ctx.index());
    ctx.value(text == null ? null : fromText(text));
  }

  @Override
  public final void set(BindingSetSQLOutputContext<U> ctx) throws SQLException {
    throw new SQLFeatureNotSupportedException(sqlType + " values cannot be written as attributes of a SQL UDT");
  }

  @Override
  public final void get(BindingGetSQLInputContext<U> ctx) throws SQLException {
    throw new SQLFeatureNotSupportedException(sqlType + " values cannot be read as attributes of a SQL UDT");
  }
}
