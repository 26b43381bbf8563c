export default function HomePage() {
  return (
    <main>
      <h1>Browser Device Operator Service</h1>
      <p>
        A machine API that runs natural-language browser tasks on cloud browser devices.
      </p>
      <ul>
        <li>
          <a href="/console">Operator console</a> (operators of the preview: organizations, keys, escalations)
        </li>
        <li>
          <a href="/docs">API reference</a> (OpenAPI 3.1 at <a href="/v1/openapi.json">/v1/openapi.json</a>)
        </li>
        <li>
          Health: <a href="/healthz">/healthz</a>, readiness: <a href="/readyz">/readyz</a>
        </li>
      </ul>
    </main>
  );
}
