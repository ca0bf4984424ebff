"""Project keys from git remote URLs: every form of one remote gives one key, never credentials."""

import pytest
from cairn.projects import normalise_remote


@pytest.mark.unit
@pytest.mark.parametrize(
    ("remote", "key"),
    [
        ("git@github.com:Acme/Shop.git", "github.com/acme/shop"),
        ("https://github.com/acme/shop", "github.com/acme/shop"),
        ("https://github.com/acme/shop.git/", "github.com/acme/shop"),
        ("https://user:s3cret@github.com/acme/shop.git", "github.com/acme/shop"),
        ("ssh://git@github.com:22/acme/shop.git", "github.com/acme/shop"),
        ("git@gitlab.example.com:group/sub/repo.git", "gitlab.example.com/group/sub/repo"),
    ],
)
def test_every_form_of_a_remote_url_gives_the_same_key_without_credentials(remote, key):
    assert normalise_remote(remote) == key
