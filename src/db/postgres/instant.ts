// PostgreSQL's column type for svc's instants.
import { customType } from "drizzle-orm/pg-core";

/**
 * A timestamptz with milliseconds that reads and writes the contract's ISO-8601 strings, as the
 * SQLite tables' text columns do: the one store then sees the same values on both databases.
 */
export const instant = customType<{ data: string; driverData: Date | string }>({
  // Spelt as drizzle-kit spells timestamp(3) with time zone, so the migrations see no change.
  dataType: () => "timestamp (3) with time zone",
  fromDriver: (value) => new Date(value).toISOString(),
});
