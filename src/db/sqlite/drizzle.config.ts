// drizzle-kit settings for the SQLite migrations (`bun run db:generate`).
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/sqlite/schema.ts",
  out: "./drizzle/sqlite",
});
