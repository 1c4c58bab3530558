// SDL files are imported as text (`with { type: "text" }`), which embeds them in the binary.
declare module "*.graphql" {
  const text: string;
  export default text;
}
