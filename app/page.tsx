import { Anchor, Container, List, ListItem, Text, Title } from '@mantine/core';

export default function HomePage() {
  return (
    <Container size="sm" py="xl" component="main">
      <Title order={1} mb="sm">
        Browser Device Operator Service
      </Title>
      <Text mb="md">A machine API that runs natural-language browser tasks on cloud browser devices.</Text>
      <List spacing="xs">
        <ListItem>
          <Anchor href="/console">Operator console</Anchor> (operators of the preview: escalations, organizations, keys, devices)
        </ListItem>
        <ListItem>
          <Anchor href="/docs">API reference</Anchor> (OpenAPI 3.1 at <Anchor href="/v1/openapi.json">/v1/openapi.json</Anchor>)
        </ListItem>
        <ListItem>
          Health: <Anchor href="/healthz">/healthz</Anchor>, readiness: <Anchor href="/readyz">/readyz</Anchor>
        </ListItem>
      </List>
    </Container>
  );
}
