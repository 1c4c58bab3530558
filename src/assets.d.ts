// SDL files are imported as text (`with { type: "text" }`), which embeds them in the binary.
declare module "*.graphql" {
  const text: string;
  export default text;
}

// Swagger UI's files are imported `with { type: "file" }`: a path, embedded in the binary.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
