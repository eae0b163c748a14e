-- Appliance-wide settings shared by replicas, such as the key that signs VERP return paths.
CREATE TABLE appliance_settings (
  name                    text PRIMARY KEY,
  value                   text NOT NULL
);
